# What `cmake --install` puts under the prefix: the public headers, the libraries (static by default, shared
# with -DBUILD_SHARED_LIBS=ON), the executables, a CMake package (`find_package(duet CONFIG REQUIRED)`) and a
# pkg-config file. Two components, as the Debian packages split them (make deb): `runtime` (executables and
# shared libraries) and `dev` (headers, static libraries and link names, the package files).
include(CMakePackageConfigHelpers)

# The targets a user links, named duet::NAME in the package as in this tree.
set(duet_public_libraries duet_jsonrpc duet_protocol duet_metrics duet_log duet_store duet_store_redis
                          duet_server duet_transport_stdio duet_transport_http duet_client duet_auth
                          duet_gateway)
# Linked privately by the public ones; a static library's private dependencies must be installed with it.
set(duet_internal_libraries duet_tls duet_support duet_boost_json)

foreach(library IN LISTS duet_public_libraries duet_internal_libraries)
    string(REGEX REPLACE "^duet_(transport_)?" "" exported "${library}")
    # 0.x: a minor release may change the ABI, so the soname carries the minor version.
    set_target_properties(${library} PROPERTIES EXPORT_NAME ${exported} VERSION ${PROJECT_VERSION}
                                                SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
    if(BUILD_SHARED_LIBS) # each finds the others beside it, wherever the prefix is
        set_target_properties(${library} PROPERTIES INSTALL_RPATH "$ORIGIN")
    endif()
endforeach()

install(TARGETS ${duet_public_libraries} ${duet_internal_libraries} EXPORT duet-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/duet DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
        FILES_MATCHING PATTERN "*.hpp")

set(duet_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/duet)
install(EXPORT duet-targets NAMESPACE duet:: DESTINATION ${duet_package_dir} COMPONENT dev)
# A static library's private dependencies (hiredis through pkg-config) are the consumer's to find too.
if(BUILD_SHARED_LIBS)
    set(DUET_STATIC_LIBRARIES OFF)
else()
    set(DUET_STATIC_LIBRARIES ON)
endif()
configure_package_config_file(cmake/duet-config.cmake.in ${PROJECT_BINARY_DIR}/duet-config.cmake
                              INSTALL_DESTINATION ${duet_package_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/duet-config-version.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/duet-config.cmake ${PROJECT_BINARY_DIR}/duet-config-version.cmake
        DESTINATION ${duet_package_dir} COMPONENT dev)

# pkg-config: one `duet` module with every library in link order. Static libraries need their dependencies at
# link time, so then they are Requires and not Requires.private: `pkg-config --libs duet` links either way.
if(DUET_STATIC_LIBRARIES)
    set(duet_pc_requires "Requires: openssl hiredis")
else()
    set(duet_pc_requires "Requires.private: openssl hiredis")
endif()
set(duet_pc_link_order duet_gateway duet_transport_http duet_transport_stdio duet_auth duet_client duet_server
                       duet_store_redis duet_store duet_metrics duet_log duet_tls duet_protocol duet_jsonrpc
                       duet_support duet_boost_json)
list(TRANSFORM duet_pc_link_order PREPEND "-l")
# Relocatable: the prefix is found from where the file lies, so `cmake --install --prefix` and a package's
# scratch root both hold.
file(RELATIVE_PATH duet_pc_prefix_from_file /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" duet_pc_prefix_from_file "${duet_pc_prefix_from_file}")
string(JOIN " " duet_pc_libs ${duet_pc_link_order})
configure_file(cmake/duet.pc.in ${PROJECT_BINARY_DIR}/duet.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/duet.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# Shared builds: the programs find the libraries beside them wherever the prefix is.
file(RELATIVE_PATH duet_bin_to_lib /${CMAKE_INSTALL_BINDIR} /${CMAKE_INSTALL_LIBDIR})
foreach(program duet duet-conformance-server duet-conformance-client)
    if(TARGET ${program})
        if(BUILD_SHARED_LIBS)
            set_target_properties(${program} PROPERTIES INSTALL_RPATH "$ORIGIN/${duet_bin_to_lib}")
        endif()
        install(TARGETS ${program} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
    endif()
endforeach()
