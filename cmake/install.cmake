# The installed package (docs/building.md#installing-and-using-the-library):
#   <libdir>/libhsched.so.MAJOR.MINOR.PATCH (SONAME libhsched.so.MAJOR.MINOR while the major is
#   0), libhsched.so, libhsched.a: every library of the public API in one shared library and one
#   static archive; <includedir>/hsched/*.h; <bindir>/hsched; <libdir>/hsched/libze_hsched_sim.so
#   (the simulated NPU driver); <datadir>/hsched/configs; <docdir> (README, LICENSE, docs/);
#   <libdir>/cmake/hsched (find_package(hsched) -> hsched::hsched, hsched::hsched_static) and
#   <libdir>/pkgconfig/hsched.pc.
# The library finds its configs and the driver relative to where it is installed
# (core/install_paths.h); nothing installed refers to the source or build tree.
include(CMakePackageConfigHelpers)

# What a program linked with libhsched.a links besides (Debian's names; pkg-config's
# Libs.private and hsched::hsched_static say the same).
set(HSCHED_STATIC_DEPENDENCIES
  onnx onnx_proto protobuf dnnl tbb gomp clblast OpenCL ze_loader yaml-cpp pugixml crypto
  boost_graph boost_regex dl pthread)

# HSCHED_API_LIBRARIES: the top-level CMakeLists.txt.
set(api_archives "")
foreach(library ${HSCHED_API_LIBRARIES})
  list(APPEND api_archives $<TARGET_FILE:${library}>)
endforeach()

# libhsched.so: every object of the archives (--whole-archive), then the archives again for the
# link order of their own dependencies (nothing is taken twice).
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/hsched_library.cpp  # written when it changes
     CONTENT "// libhsched.so and libhsched.a: the objects of hsched's libraries\n")
add_library(hsched_shared SHARED ${PROJECT_BINARY_DIR}/hsched_library.cpp)
set_target_properties(hsched_shared PROPERTIES
  OUTPUT_NAME hsched
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
target_link_libraries(hsched_shared PRIVATE
  -Wl,--whole-archive ${api_archives} -Wl,--no-whole-archive ${HSCHED_API_LIBRARIES})
target_include_directories(hsched_shared INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>)
target_compile_features(hsched_shared INTERFACE cxx_std_20)
add_library(hsched::hsched ALIAS hsched_shared)

# libhsched.a: the archives' objects in one archive (ar's MRI script).
set(static_archive ${PROJECT_BINARY_DIR}/libhsched.a)
set(mri "CREATE ${static_archive}\n")
foreach(archive ${api_archives})
  string(APPEND mri "ADDLIB ${archive}\n")
endforeach()
string(APPEND mri "SAVE\nEND\n")
file(GENERATE OUTPUT ${PROJECT_BINARY_DIR}/hsched_static.mri CONTENT "${mri}")
add_custom_command(
  OUTPUT ${static_archive}
  COMMAND ${CMAKE_COMMAND} -E rm -f ${static_archive}
  COMMAND ${CMAKE_AR} -M < ${PROJECT_BINARY_DIR}/hsched_static.mri
  DEPENDS ${HSCHED_API_LIBRARIES} ${PROJECT_BINARY_DIR}/hsched_static.mri
  COMMENT "Combining hsched's libraries into libhsched.a"
  VERBATIM)
add_custom_target(hsched_static_archive ALL DEPENDS ${static_archive})
add_library(hsched_static STATIC IMPORTED GLOBAL)
set_target_properties(hsched_static PROPERTIES
  IMPORTED_LOCATION ${static_archive}
  INTERFACE_INCLUDE_DIRECTORIES "${PROJECT_SOURCE_DIR}/include;${PROJECT_BINARY_DIR}/include"
  INTERFACE_LINK_LIBRARIES "${HSCHED_STATIC_DEPENDENCIES}")
add_dependencies(hsched_static hsched_static_archive)
add_library(hsched::hsched_static ALIAS hsched_static)

install(TARGETS hsched_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${static_archive} DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS hsched RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET ze_hsched_sim)
  install(TARGETS ze_hsched_sim LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/hsched)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/hsched DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/hsched/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hsched)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/hsched/configs)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# The CMake package and the pkg-config file.
set(HSCHED_SONAME libhsched.so.${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/hschedConfig.cmake.in
  ${PROJECT_BINARY_DIR}/hschedConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hsched
  PATH_VARS CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hschedConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/hschedConfig.cmake
              ${PROJECT_BINARY_DIR}/hschedConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hsched)
list(TRANSFORM HSCHED_STATIC_DEPENDENCIES PREPEND "-l" OUTPUT_VARIABLE static_flags)
string(JOIN " " HSCHED_PC_LIBS_PRIVATE ${static_flags})
# Relocatable: the prefix is found from the .pc file's own folder.
file(RELATIVE_PATH HSCHED_PC_TO_PREFIX
     ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${PROJECT_SOURCE_DIR}/cmake/hsched.pc.in ${PROJECT_BINARY_DIR}/hsched.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hsched.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
