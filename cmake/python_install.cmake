# Runs at install time (bindings/CMakeLists.txt, install(CODE)), when CMAKE_INSTALL_PREFIX is the final
# prefix (`cmake --install build --prefix P`), so the destination follows the prefix, not the configure step.
# In: LLMSIM_PYTHON_EXECUTABLE, LLMSIM_PYTHON_SITE_DIR (empty = automatic), LLMSIM_PYTHON_FILES
# (the compiled _core module, then the package's .py files).
#
# Automatic: where a Python that runs from P imports packages from —
#   1. P is a virtual environment (P/pyvenv.cfg, PEP 405): P/lib/pythonX.Y/site-packages;
#   2. the configured interpreter searches a site-packages or dist-packages folder under P/lib: that folder
#      (Debian's python3 with P = /usr/local: /usr/local/lib/python3.X/dist-packages);
#   3. otherwise P/lib/pythonX.Y/site-packages (CPython's layout for a prefix), with a note to add it to
#      PYTHONPATH.
if(LLMSIM_PYTHON_SITE_DIR)
  if(IS_ABSOLUTE "${LLMSIM_PYTHON_SITE_DIR}")
    set(_llmsim_site "${LLMSIM_PYTHON_SITE_DIR}")
  else()
    set(_llmsim_site "${CMAKE_INSTALL_PREFIX}/${LLMSIM_PYTHON_SITE_DIR}")
  endif()
else()
  set(_llmsim_pick [=[
import os, sys
prefix = os.path.realpath(sys.argv[1])
generic = os.path.join(prefix, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
if os.path.isfile(os.path.join(prefix, "pyvenv.cfg")):
    print("venv;" + generic)
    sys.exit()
lib = os.path.join(prefix, "lib") + os.sep
for p in sys.path:
    if os.path.basename(p) in ("site-packages", "dist-packages") and os.path.realpath(p).startswith(lib):
        print("interpreter;" + p)
        sys.exit()
print("generic;" + generic)
]=])
  execute_process(COMMAND "${LLMSIM_PYTHON_EXECUTABLE}" -c "${_llmsim_pick}" "${CMAKE_INSTALL_PREFIX}"
                  OUTPUT_VARIABLE _llmsim_out OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _llmsim_rc)
  if(NOT _llmsim_rc EQUAL 0 OR NOT _llmsim_out MATCHES "^(venv|interpreter|generic);(.+)$")
    message(FATAL_ERROR "llmsim: could not ask ${LLMSIM_PYTHON_EXECUTABLE} where packages go under "
                        "${CMAKE_INSTALL_PREFIX} (${_llmsim_rc}: ${_llmsim_out}); set LLMSIM_PYTHON_SITE_DIR")
  endif()
  set(_llmsim_site "${CMAKE_MATCH_2}")
  if(CMAKE_MATCH_1 STREQUAL "generic")
    message(STATUS "llmsim: ${LLMSIM_PYTHON_EXECUTABLE} does not search ${CMAKE_INSTALL_PREFIX}; "
                   "add ${_llmsim_site} to PYTHONPATH (or set LLMSIM_PYTHON_SITE_DIR)")
  endif()
endif()
list(POP_FRONT LLMSIM_PYTHON_FILES _llmsim_module)
file(INSTALL DESTINATION "${_llmsim_site}/llmsim" TYPE MODULE FILES "${_llmsim_module}")
file(INSTALL DESTINATION "${_llmsim_site}/llmsim" TYPE FILE FILES ${LLMSIM_PYTHON_FILES})
