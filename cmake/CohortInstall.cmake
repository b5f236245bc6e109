# Install rules: headers, the library, the licence, the CMake package (cohort::cohort), the opt-in
# Torch package and cohort.pc.
include(CMakePackageConfigHelpers)

set(COHORT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/cohort)

install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/cohort
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The terms travel with the binaries: <prefix>/share/doc/cohort/LICENSE.
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})

install(TARGETS cohort EXPORT cohortTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(EXPORT cohortTargets
        NAMESPACE cohort::
        DESTINATION ${COHORT_CMAKE_DIR})

# A static libcohort carries its private dependencies to its users' link line.
get_target_property(_cohort_type cohort TYPE)
if(_cohort_type STREQUAL "STATIC_LIBRARY")
  set(COHORT_STATIC ON)
else()
  set(COHORT_STATIC OFF)
endif()

configure_package_config_file(
  ${CMAKE_CURRENT_SOURCE_DIR}/cmake/cohortConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/cohortConfig.cmake
  INSTALL_DESTINATION ${COHORT_CMAKE_DIR})
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/cohortConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cohortConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/cohortConfigVersion.cmake
        DESTINATION ${COHORT_CMAKE_DIR})

# The opt-in find_package(Torch) for libtorch projects (cmake/TorchConfig.cmake says how to use it).
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/cmake/TorchConfig.cmake DESTINATION ${COHORT_CMAKE_DIR}/torch)

# pkg-config: paths relative to the .pc file, so `cmake --install --prefix X` works.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(COHORT_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(COHORT_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(COHORT_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH _cohort_up "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
  string(REGEX REPLACE "/$" "" _cohort_up "${_cohort_up}")
  set(COHORT_PC_PREFIX "\${pcfiledir}/${_cohort_up}")
  set(COHORT_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(COHORT_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
string(JOIN " " COHORT_PC_OPENMP ${OpenMP_CXX_FLAGS})
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cmake/cohort.pc.in
               ${CMAKE_CURRENT_BINARY_DIR}/cohort.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/cohort.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
