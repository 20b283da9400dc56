# Sourced by tools/setup.sh and tools/fuzz.sh:
#   build_flags
# prints, one a line, the cmake flags every build of theirs takes from the
# machine and the environment: MOMENTA_WERROR=1 in the environment (CI) makes
# any compiler warning fail the build (-DMOMENTA_WERROR=ON, else OFF); ccache,
# when there is one, is the compiler launcher (a rebuild after a checkout is cheap).
build_flags() {
  if [[ ${MOMENTA_WERROR:-0} == 1 ]]; then echo -DMOMENTA_WERROR=ON; else echo -DMOMENTA_WERROR=OFF; fi
  if command -v ccache >/dev/null; then echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache; fi
}
