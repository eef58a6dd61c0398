# Debian packages from CPack (`make deb`): `duet`, the programs (and the shared libraries when built shared),
# and `libduet-dev`, the headers, static libraries, CMake package and pkg-config file. The components are
# the install rules' (cmake/duet_install.cmake).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME duet)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Duet maintainers <duet@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Model Context Protocol toolkit serving both protocol eras")
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# zstd packs the static libraries in seconds where xz takes most of a minute, and the dpkg of every Debian
# release with Boost 1.81 reads it.
set(CPACK_DEBIAN_COMPRESSION_TYPE zstd)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME duet)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION net)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
    "duet serve (a demo server), duet gateway (any MCP server, of either era, behind
one endpoint serving both), and the duet client commands (discover, list,
call, read, prompt, listen, login).")
# The programs' shared-library dependencies (OpenSSL, hiredis, mimalloc, the C++ runtime), read off them.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libduet-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_DESCRIPTION
    "Headers, libraries, the CMake package (find_package(duet)) and the pkg-config
file of the Duet C++20 MCP library: servers, clients and gateways that serve
legacy (2025-11-25 and older) and modern (2026-07-28) clients at once.")
# What building against the headers and static libraries needs.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libboost1.81-dev, libssl-dev, libhiredis-dev, pkg-config")
if(BUILD_SHARED_LIBS)
    set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${CPACK_DEBIAN_DEV_PACKAGE_DEPENDS}, duet (= ${PROJECT_VERSION})")
endif()

include(CPack)
