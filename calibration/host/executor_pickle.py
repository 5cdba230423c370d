# Microbenchmark: pickle round trips of vLLM 0.8.4's per-step executor messages (MultiprocExecutor.collective_rpc:
# rpc_broadcast_mq.enqueue((method, args, kwargs, rank)) of a SchedulerOutput; worker_response_mq of a
# ModelRunnerOutput), decode-only steps of B running requests. Data classes shaped as vllm/v1/core/sched/output.py and
# vllm/v1/outputs.py at v0.8.4 (per-request CachedRequestData objects, before vllm#20232).
import gc, pickle, time, sys, uuid
from dataclasses import dataclass
@dataclass
class CachedRequestData:
    req_id: str
    resumed_from_preemption: bool
    new_token_ids: list
    new_block_ids: list
    num_computed_tokens: int
@dataclass
class SchedulerOutput:
    scheduled_new_reqs: list
    scheduled_cached_reqs: list
    num_scheduled_tokens: dict
    total_num_scheduled_tokens: int
    scheduled_spec_decode_tokens: dict
    scheduled_encoder_inputs: dict
    num_common_prefix_blocks: int
    finished_req_ids: set
    free_encoder_input_ids: list
    structured_output_request_ids: dict
    grammar_bitmask: object
@dataclass
class ModelRunnerOutput:
    req_ids: list
    req_id_to_index: dict
    sampled_token_ids: list
    spec_token_ids: object
    logprobs: object
    prompt_logprobs_dict: dict
def so(b):
    ids=[f"cmpl-{uuid.uuid4().hex}-0" for _ in range(b)]
    cached=[CachedRequestData(i,False,[],[] if k%16 else [1000+k],1000+k) for k,i in enumerate(ids)]
    return ids, SchedulerOutput([],cached,{i:1 for i in ids},b,{},{},0,set(),[],{},None)
def mro(ids):
    return ModelRunnerOutput(ids,{i:k for k,i in enumerate(ids)},[[12345] for _ in ids],None,None,{})
def best(f,n=200):
    t=1e9
    for _ in range(5):
        s=time.perf_counter()
        for _ in range(n): f()
        t=min(t,(time.perf_counter()-s)/n)
    return t
gc.disable()
print("python",sys.version.split()[0])
for b in [1,8,32,64,128,256,512]:
    ids,o=so(b); r=mro(ids)
    msg=("execute_model",(o,),{},0)
    d=pickle.dumps(msg,protocol=pickle.HIGHEST_PROTOCOL); d2=pickle.dumps(r,protocol=pickle.HIGHEST_PROTOCOL)
    t=best(lambda: pickle.dumps(msg,protocol=pickle.HIGHEST_PROTOCOL))+best(lambda: pickle.loads(d))\
     +best(lambda: pickle.dumps(r,protocol=pickle.HIGHEST_PROTOCOL))+best(lambda: pickle.loads(d2))
    print(f"B={b:4d} bytes {len(d):7d}+{len(d2):6d} round trip {t*1e6:8.1f} us  per req {t*1e6/b:6.2f} us")
