# ctest install.cmake_consumer (registered in tests/CMakeLists.txt):
#   cmake -DBUILD_DIR=<llmsim build> -DWORK_DIR=<scratch> -DSOURCE_DIR=<this folder> -DCXX=<compiler>
#         [-DLAUNCHER=ccache] -P run_consumer.cmake
# 1. `cmake --install BUILD_DIR --prefix WORK_DIR/prefix`; every installed file lies under that prefix;
# 2. this folder's project finds the installed package (find_package(llmsim) only, CMAKE_PREFIX_PATH),
#    builds against llmsim::sim and llmsim::memory, and runs;
# 3. the consumer's simulation equals the installed CLI's `simulate --json`, and the installed Python
#    package imports from the prefix.
cmake_minimum_required(VERSION 3.20)
foreach(v BUILD_DIR WORK_DIR SOURCE_DIR CXX)
  if(NOT ${v})
    message(FATAL_ERROR "run_consumer.cmake: -D${v}=... is required")
  endif()
endforeach()
set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# (Arguments pass through a CMake list: no ';' inside one.)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# 1. Install, and nothing outside the prefix (the manifest lists every file written).
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
file(STRINGS ${BUILD_DIR}/install_manifest.txt installed)
list(LENGTH installed n)
foreach(f IN LISTS installed)
  string(FIND "${f}" "${prefix}/" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "installed outside the prefix ${prefix}: ${f}")
  endif()
endforeach()
foreach(f bin/llmsim include/llmsim/engine/simulator.hpp lib/libllmsim_core.a lib/libllmsim_analysis.a
          lib/cmake/llmsim/llmsimConfig.cmake lib/cmake/llmsim/llmsimConfigVersion.cmake)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${prefix}/${f}")
  endif()
endforeach()
message(STATUS "${n} files installed under ${prefix}")

# 2. A consumer project that knows only the prefix.
set(consumer_build ${WORK_DIR}/consumer)
# Release (NDEBUG) without optimisation: the consumer's own code is two small mains over the installed (optimised)
# libraries, and -O3 on them cost ~1.6 s of CPU in a fresh tree (simulate.cpp 4.0 -> 2.5 s, issue 30). What the test
# asserts (found by find_package alone, linked, equal to the installed CLI) does not depend on it: their printing is
# nlohmann/json's, exact at any -O level.
set(configure_args -S ${SOURCE_DIR} -B ${consumer_build} -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG"
                   -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX})
if(LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
run(${CMAKE_COMMAND} ${configure_args})
run(${CMAKE_COMMAND} --build ${consumer_build} -j 2)
run(${consumer_build}/consumer_memory)
message(STATUS "consumer_memory: ${out}")

# 3. The library as linked by the consumer and the installed CLI give the same numbers.
set(scenario ${WORK_DIR}/scenario.json)
file(WRITE ${scenario} [=[{"model": "llama-3.1-8b", "hardware": {"gpu": "a100-80gb-sxm"},
 "workload": {"arrival": {"process": "poisson", "rate": 4}, "num_requests": 300, "warmup_requests": 30, "seed": 7},
 "slo": {"ttft_ms": {"p95": 2000}}}]=])
run(${consumer_build}/consumer_simulate ${scenario})
set(from_library "${out}")
run(${prefix}/bin/llmsim simulate --scenario ${scenario} --json)
if(NOT from_library STREQUAL out)
  message(FATAL_ERROR "the consumer and the installed CLI disagree:\n${from_library}\n---\n${out}")
endif()
string(JSON completed GET "${out}" completed_requests)
message(STATUS "consumer_simulate = installed llmsim simulate --json: ${completed} requests completed")

if(PYTHON)
  file(GLOB_RECURSE core_module ${prefix}/_core*.so)  # where python_install.cmake chose to put it
  list(LENGTH core_module found)
  if(NOT found EQUAL 1)
    message(FATAL_ERROR "expected one installed llmsim/_core module under ${prefix}, found: ${core_module}")
  endif()
  get_filename_component(site ${core_module} DIRECTORY)
  get_filename_component(site ${site} DIRECTORY)
  run(${CMAKE_COMMAND} -E env --unset=PYTHONPATH PYTHONPATH=${site} ${PYTHON} -c
      "import llmsim, sys\nf = llmsim.__file__\nassert f.startswith(sys.argv[1]), f\nprint(f)" ${prefix}/)
  message(STATUS "python imports ${out}")
endif()
