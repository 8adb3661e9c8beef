# `cmake --install`: the libraries an embedding program links (dirsched::core, ::text, ::record, ::scenario,
# ::folders, ::outputs, ::runtime), their headers, and a package config so that find_package(dirsched) works from another
# project (examples/consumer/ is one, built by the test install.consumer).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(dirsched_exported dirsched_core)
foreach(t dirsched_text dirsched_record dirsched_scenario dirsched_folders dirsched_outputs dirsched_runtime)
  if(TARGET ${t})
    list(APPEND dirsched_exported ${t})
  endif()
endforeach()
foreach(t ${dirsched_exported})
  string(REPLACE "dirsched_" "" short ${t})
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${short})
endforeach()
# The warnings target is linked privately (LINK_ONLY in the export): it carries no usage requirement
# for a consumer, but the export set must name it.
set_target_properties(dirsched_warnings PROPERTIES EXPORT_NAME warnings)

install(TARGETS ${dirsched_exported} dirsched_warnings EXPORT dirschedTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY core/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(dir text record scenario folders outputs runtime)
  if(TARGET dirsched_${dir})
    install(DIRECTORY ${dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endforeach()

set(dirsched_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/dirsched)
install(EXPORT dirschedTargets NAMESPACE dirsched:: DESTINATION ${dirsched_cmake_dir})
configure_package_config_file(cmake/dirschedConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/dirschedConfig.cmake
                              INSTALL_DESTINATION ${dirsched_cmake_dir})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/dirschedConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/dirschedConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/dirschedConfigVersion.cmake
        DESTINATION ${dirsched_cmake_dir})
