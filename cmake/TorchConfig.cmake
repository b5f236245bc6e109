# find_package(Torch) for a libtorch project built against cohort instead (opt-in: it is installed
# where find_package(Torch) does not look by itself). Point the project at it with
#   cmake -DTorch_DIR=<cohort prefix>/lib/cmake/cohort/torch ...
# and keep its CMakeLists as libtorch's documentation writes it: TORCH_LIBRARIES, TORCH_CXX_FLAGS,
# TORCH_INCLUDE_DIRS and the imported target `torch` all mean cohort::cohort. The sources change
# `#include <torch/torch.h>` to `#include <cohort/cohort.h>` plus `namespace torch = cohort;`.
include(CMakeFindDependencyMacro)
find_dependency(cohort CONFIG PATHS "${CMAKE_CURRENT_LIST_DIR}/.." NO_DEFAULT_PATH)

if(NOT TARGET torch)
  add_library(torch INTERFACE IMPORTED)
  set_target_properties(torch PROPERTIES INTERFACE_LINK_LIBRARIES cohort::cohort)
endif()
set(TORCH_LIBRARIES torch)
set(TORCH_LIBRARY torch)
get_target_property(TORCH_INCLUDE_DIRS cohort::cohort INTERFACE_INCLUDE_DIRECTORIES)
set(TORCH_CXX_FLAGS "")
set(TORCH_FOUND TRUE)
