# Decides whether the Python package is built (MOMENTA_PYTHON_ENABLED) from
# MOMENTA_BUILD_PYTHON (AUTO, ON, OFF) and what is installed, and finds the
# interpreter it is built for. Included by the top-level CMakeLists.txt before
# the layers, which are then compiled as position-independent code.
#
# The interpreter is Debian's, /usr/bin/python3 (the one that sees Debian's
# numpy, pytest and hypothesis), unless -DPython3_EXECUTABLE=... names another.
set(MOMENTA_PYTHON_ENABLED OFF)
set(_momenta_python ${MOMENTA_BUILD_PYTHON})
if(NOT _momenta_python MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "MOMENTA_BUILD_PYTHON is '${_momenta_python}': give AUTO, ON or OFF")
endif()
# A sanitizer build's module could not be loaded by a plain interpreter (the
# runtime must come first), and a fuzz build builds fuzz targets only.
if(_momenta_python STREQUAL "AUTO" AND (CMAKE_BUILD_TYPE MATCHES "^(Sanitize|Tsan)$" OR MOMENTA_FUZZ))
  set(_momenta_python OFF)
endif()
if(NOT _momenta_python STREQUAL "OFF")
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "The Python interpreter the package is built for")
  endif()
  find_package(Python3 3.9 COMPONENTS Interpreter Development.Module QUIET)
  set(PYBIND11_FINDPYTHON ON)
  find_package(pybind11 2.6 CONFIG QUIET)
  if(Python3_FOUND AND pybind11_FOUND)
    set(MOMENTA_PYTHON_ENABLED ON)
  elseif(_momenta_python STREQUAL "ON")
    if(NOT Python3_FOUND)
      momenta_require(Python3_FOUND "the Python 3 headers (or -DMOMENTA_BUILD_PYTHON=OFF)" python3-dev)
    endif()
    momenta_require(pybind11_FOUND "pybind11 (or -DMOMENTA_BUILD_PYTHON=OFF)" pybind11-dev)
  else()
    message(STATUS "momenta: the Python package is not built (install python3-dev and pybind11-dev, "
                   "or run tools/setup.sh)")
  endif()
endif()
