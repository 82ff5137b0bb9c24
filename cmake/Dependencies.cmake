# Every third-party library, found the ordinary way. scripts/setup.sh installs
# the Debian packages that provide them; the CUDA toolkit is preinstalled.

find_package(CUDAToolkit REQUIRED)          # cudart, nvrtc, cusparse (later issues)
find_package(fmt REQUIRED)                  # formatting; header-only target, no runtime .so
find_package(doctest REQUIRED)              # unit tests
find_package(CLI11 REQUIRED)                # command line
find_package(nlohmann_json 3 REQUIRED)      # JSON output and tuning records
find_package(ZLIB REQUIRED)                 # .gz inputs

# LLVM's ADT (StringRef, SmallVector, DenseMap), linked statically so no binary
# needs libLLVM at run time.
find_package(LLVM 14 REQUIRED CONFIG HINTS /usr/lib/llvm-14/lib/cmake/llvm)
add_library(gnnjit_llvm INTERFACE)
target_include_directories(gnnjit_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
target_compile_definitions(gnnjit_llvm INTERFACE ${LLVM_DEFINITIONS})
target_link_libraries(gnnjit_llvm INTERFACE LLVMSupport)
