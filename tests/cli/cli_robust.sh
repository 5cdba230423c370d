#!/usr/bin/env bash
# Issue 17 through the CLI: special and hostile input files, full disks, signals, --resume, thread limits.
# Every case names what it checks; a hang is caught by `timeout` (exit 124 fails the case).
set -u
llmsim=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
fail=0
expect() {  # expect <status> <description> <command...>: stdout/stderr in out/err
  local want=$1 what=$2
  shift 2
  timeout 60 "$@" >out 2>err
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; head -c 2000 err; fail=1
  else
    echo "ok: $what (exit $got)"
  fi
}
contains() {  # contains <file> <text> <description>
  grep -qF -- "$2" "$1" || { echo "FAIL: $3: '$2' not in $1:"; head -c 2000 "$1"; fail=1; }
}
absent() {  # absent <glob> <description>
  if compgen -G "$1" >/dev/null; then echo "FAIL: $2: $(ls -a $1)"; fail=1; fi
}

/usr/bin/python3 - "$src" <<'PY'
import json, sys
src = sys.argv[1]
s = json.load(open(f"{src}/examples/scenarios/chat-8b.json"))
s["workload"].update(num_requests=200, warmup_requests=20)
json.dump(s, open("small.json", "w"))
long = json.loads(json.dumps(s)); long["workload"].update(num_requests=5_000_000, warmup_requests=0)
json.dump(long, open("long.json", "w"))
price = json.loads(json.dumps(s)); price["hardware"]["price_per_gpu_hour"] = 1e308
json.dump(price, open("price.json", "w"))
grid = {"base": "small.json", "grid": {"workload.num_requests": [20000],
        "workload.arrival.rate": [1 + i / 4 for i in range(24)]}}
json.dump(grid, open("grid.json", "w"))
other = dict(grid, grid={"workload.num_requests": [20000], "workload.arrival.rate": [2 + i / 4 for i in range(24)]})
json.dump(other, open("other.json", "w"))
many = {"base": "small.json", "grid": {"workload.num_requests": [60], "workload.warmup_requests": [6],
        "workload.arrival.rate": [1 + i / 100 for i in range(512)]}}
json.dump(many, open("many.json", "w"))
PY

# --- inputs that are not regular files, or not what they seem --------------------------------------------------
expect 2 "/dev/zero as a scenario (was read whole until bad_alloc)" "$llmsim" simulate --scenario /dev/zero
contains err "'/dev/zero' is a character device, expected a file" "the device is named"
mkfifo fifo
expect 2 "a FIFO nobody writes to as a scenario (open() blocked forever; now read as an empty stream)" "$llmsim" simulate --scenario fifo
contains err "is a FIFO (pipe) that ended empty" "the FIFO is named"
expect 2 "a directory as a scenario (was 'empty input')" "$llmsim" simulate --scenario "$tmp"
contains err "is a directory, expected a file" "the directory is named"
printf '{"model": "llama-3.1-8b",\n "model": "qwen2.5-14b"}' >dup.json
expect 2 "a duplicate key (last one won)" "$llmsim" simulate --scenario dup.json
contains err "duplicate key 'model' at line 2, column 2 (first at line 1, column 2)" "both positions"
expect 2 "a second positional argument (was ignored)" "$llmsim" simulate --scenario small.json other.json
contains err "given more than once" "the stray argument is refused"
expect 2 "a 1e308 price (printed \$inf/month)" "$llmsim" simulate --scenario price.json
contains err "hardware.price_per_gpu_hour" "the price field is named"
expect 2 "--target-qps 1e300 (replicas_needed null, exit 0)" "$llmsim" capacity --scenario small.json --target-qps 1e300
contains err "cost.target_qps" "the target is named"
printf 'arrival_time_s,input_tokens,output_tokens\n0,"1,000",5\n' >quoted.csv
/usr/bin/python3 -c "
import json; s = json.load(open('small.json'))
s['workload']['arrival'] = {'process': 'trace', 'path': 'quoted.csv'}; json.dump(s, open('trace.json', 'w'))"
expect 2 "a quoted \"1,000\" token count (read as 1)" "$llmsim" simulate --scenario trace.json
contains err "quoted.csv:2:2: column input_tokens" "file:line:field"
printf 'a\0b\033[31m,x\r%s\r' "$(head -c 200000 /dev/zero | tr '\0' 'y')" >hostile.csv
/usr/bin/python3 -c "
import json; s = json.load(open('small.json'))
s['workload']['arrival'] = {'process': 'trace', 'path': 'hostile.csv'}; json.dump(s, open('hostile.json', 'w'))"
expect 2 "a CR-only file with NUL and ESC bytes in its header" "$llmsim" simulate --scenario hostile.json
contains err 'a\x00b\x1B[31m' "control bytes escaped"
[ "$(wc -c <err)" -lt 1000 ] || { echo "FAIL: the message echoes the whole file ($(wc -c <err) bytes)"; fail=1; }
if tr -d '\n' <err | grep -qP '[\x00-\x08\x0b-\x1f\x7f]'; then echo "FAIL: raw control bytes on stderr"; fail=1; fi

# --- outputs: full disks, missing directories, nothing partial at the final path -------------------------------
timeout 60 "$llmsim" simulate --scenario small.json --json >/dev/full 2>err
[ $? -eq 2 ] && echo "ok: stdout on /dev/full (exit 2)" || { echo "FAIL: stdout on /dev/full did not exit 2"; fail=1; }
contains err "No space left on device" "the reason is given"
expect 2 "--requests-csv on a full disk" "$llmsim" simulate --scenario small.json --requests-csv /dev/full
contains err "--requests-csv: cannot write '/dev/full': No space left on device" "the file is named"
start=$(date +%s%N)
expect 2 "sweep --out into a missing directory" "$llmsim" sweep -q --grid grid.json --out missing/rows.csv
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ "$elapsed_ms" -lt 2000 ] || { echo "FAIL: the missing directory was found after ${elapsed_ms} ms (after the sweep)"; fail=1; }
contains err "no such directory 'missing'" "the directory is named"
# A disk that fills up mid-file: a 1-block file-size limit (SIGXFSZ ignored, so write() fails with EFBIG).
( ulimit -f 1; trap '' XFSZ; exec timeout 60 "$llmsim" sweep -q --grid grid.json --out big.csv ) >out 2>err
[ $? -eq 2 ] && echo "ok: sweep --out on a full disk (exit 2)" || { echo "FAIL: sweep --out on a full disk: not exit 2"; cat err; fail=1; }
absent "big.csv" "a truncated file at the final path"
absent ".big.csv.tmp-*" "a temporary file left behind"

# --- signals: prompt, non-zero, no partial file at the final path; --resume ------------------------------------
timeout 60 "$llmsim" simulate --scenario long.json --requests-csv req.csv >out 2>err &
pid=$!; sleep 1; kill -TERM $pid; wait $pid; code=$?
[ $code -eq 143 ] && echo "ok: SIGTERM during simulate --requests-csv (exit 143)" || { echo "FAIL: SIGTERM: exit $code"; cat err; fail=1; }
absent "req.csv" "a requests CSV at the final path after SIGTERM"
absent ".req.csv.tmp-*" "a temporary requests CSV left behind"
timeout 120 "$llmsim" sweep -q --grid grid.json --out full.csv -j 2 >out 2>err || { echo "FAIL: full sweep"; fail=1; }
timeout 60 "$llmsim" sweep -q --grid grid.json --out rows.csv -j 2 >out 2>err &
pid=$!
for _ in $(seq 600); do [ -s rows.csv.partial ] && break; sleep 0.05; done  # interrupt once a row is done
start=$(date +%s%N); kill -INT $pid; wait $pid; code=$?
stop_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $code -eq 130 ] && echo "ok: SIGINT during a sweep (exit 130 after ${stop_ms} ms)" || { echo "FAIL: SIGINT sweep: exit $code"; cat err; fail=1; }
[ "$stop_ms" -lt 5000 ] || { echo "FAIL: the sweep took ${stop_ms} ms to stop"; fail=1; }
absent "rows.csv" "a rows file at the final path after SIGINT"
contains err "run the same command with --resume" "the way to continue is said"
[ -s rows.csv.partial ] || { echo "FAIL: no finished rows kept in rows.csv.partial"; fail=1; }
expect 2 "a new sweep over an interrupted one's journal" "$llmsim" sweep -q --grid grid.json --out rows.csv
contains err "--resume" "points to --resume"
expect 2 "--resume with another grid" "$llmsim" sweep -q --grid other.json --out rows.csv --resume
contains err "another grid, other options or other input files" "the mismatch is named"
printf '{"point": 3, "key": "tor' >>rows.csv.partial  # a line torn by a kill -9
expect 0 "--resume continues the interrupted sweep" "$llmsim" sweep -q --grid grid.json --out rows.csv --resume -j 2
cmp -s rows.csv full.csv && echo "ok: the resumed file equals an uninterrupted run" ||
  { echo "FAIL: the resumed rows differ from an uninterrupted run"; fail=1; }
absent "rows.csv.partial" "the journal after a completed sweep"

# --- --resume after an input file the grid reads changed: its rows are not kept ------------------------------
# The class: a journal row is tied to the point's scenario and to the content of every file it names (a trace,
# a daily profile, a length file), so an edited file cannot leave rows of the old one in the result.
{ echo "arrival_time_s,input_tokens,output_tokens"; for i in $(seq 0 3999); do echo "$((i / 40)).$((i % 40 * 25)),200,40"; done; } >trace.csv
cat >trace-grid.json <<'EOF2'
{"base": {"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm", "price_per_gpu_hour": 1.8},
          "engine": {"max_model_len": 4096},
          "workload": {"arrival": {"process": "trace", "path": "trace.csv"}, "num_requests": 4000, "warmup_requests": 0}},
 "grid": {"engine.max_num_seqs": [SEQS]}}
EOF2
sed -i "s/SEQS/$(seq -s, 8 400)/" trace-grid.json  # a few seconds of work, so the interrupt lands mid-sweep
timeout 60 "$llmsim" sweep -q --grid trace-grid.json --out trace-rows.csv -j 1 >out 2>err &
pid=$!
for _ in $(seq 600); do [ -s trace-rows.csv.partial ] && break; sleep 0.05; done
kill -INT $pid; wait $pid
if [ -s trace-rows.csv.partial ]; then
  sed -i 's/,200,40$/,900,40/' trace.csv  # the same rows, four times the prompt
  expect 2 "--resume after the trace changed" "$llmsim" sweep -q --grid trace-grid.json --out trace-rows.csv --resume
  contains err "other input files" "the changed input is the named cause"
  sed -i 's/,900,40$/,200,40/' trace.csv  # back as it was: the journal's rows are this input's again
  expect 0 "--resume with the trace as journaled" "$llmsim" sweep -q --grid trace-grid.json --out trace-rows.csv --resume
else
  echo "FAIL: no row journaled before the interrupt"; fail=1
fi

# --- thread limits --------------------------------------------------------------------------------------------
# A process limit (ulimit -u) makes thread creation fail with EAGAIN, as on a shared login node. Root ignores
# the limit, so as root the sweep runs as 'nobody' (setpriv); without setpriv the case is skipped.
runner=""
if [ "$(id -u)" -eq 0 ]; then
  command -v setpriv >/dev/null && runner="setpriv --reuid=65534 --regid=65534 --clear-groups" || runner=skip
fi
if [ "$runner" = skip ]; then
  echo "skip: --jobs 512 beyond a process limit (running as root without setpriv)"
else
  chmod 755 "$tmp"
  ( ulimit -u 30; exec timeout 120 $runner "$llmsim" sweep -q --grid many.json -j 512 --json ) >out 2>err
  code=$?
  [ $code -eq 0 ] && echo "ok: --jobs 512 beyond the thread limit (exit 0)" || { echo "FAIL: --jobs 512: exit $code"; cat err; fail=1; }
  contains err "warning: started" "the fewer threads are reported"
  [ "$(grep -c '"fits"' out)" -eq 512 ] || { echo "FAIL: --jobs 512 did not print 512 rows"; fail=1; }
fi
exit $fail
