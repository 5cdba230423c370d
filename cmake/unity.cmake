# Unity batches for the library, the CLI and the Python module (issue 30: a fresh `make run` in minutes).
# Every libsim source includes nlohmann/json (and the CLI Boost.Program_options, the bindings pybind11); compiled one
# file at a time, parsing those headers and generating the same inline json code again in each object was most of
# the build: 27 spec sources took 95 s of CPU alone and 28 s as one unity file (gcc 12, -O3). Each target compiles
# as batches of LLMSIM_UNITY_LIB_BATCH sources, several per target so that two cores stay busy.
# So a source's helpers in an anonymous namespace (or `static`) must not repeat a name used by another source of the
# same target; the CI sanitizer tree (scripts/san_tree.sh) builds one object per file and keeps include hygiene.
# Generated sources (the embedded catalogues and error bands) stay on their own: they change with data/ only.
# A new source goes at the end of its target's list: inserted in the middle it moves every later source into another
# batch, and so changes which functions the compiler can inline across files (the engine's step loop included).
# llmsim_unity(target [batch]): an optional second argument overrides the batch size for one target whose few
# sources are heavy (the calibration fitter: 8 sources, 3 of them Eigen, were one 26 s object, the last of `make run`).
option(LLMSIM_UNITY "Compile the library, the CLI and the Python module as unity batches" ON)
set(LLMSIM_UNITY_LIB_BATCH 8 CACHE STRING "Sources per unity batch of the library, the CLI and the Python module")

function(llmsim_unity target)
  if(NOT LLMSIM_UNITY)
    return()
  endif()
  set(_batch ${LLMSIM_UNITY_LIB_BATCH})
  if(ARGC GREATER 1)
    set(_batch ${ARGV1})
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${_batch})
  get_target_property(_sources ${target} SOURCES)
  foreach(s IN LISTS _sources)
    get_source_file_property(_generated ${s} GENERATED)
    if(_generated)
      set_source_files_properties(${s} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endforeach()
endfunction()
