# The `paddock` executable is linked -static-pie (PADDOCK_STATIC_CLI, on wherever the static
# archives exist). Why: a one-shot `paddock run` spent about a third of its run in the dynamic
# loader (relocating and looking up symbols of ten shared libraries), measured when this was
# chosen. -static-pie rather than -static: a -static binary pays ~1.5 ms on its first C++
# exception, a static-pie one does not.
#
# Mechanism: each C library found by pkg-config links its shared object, except into a target
# whose PADDOCK_STATIC_EXE property is on, which gets the archives `pkg-config --static` names
# instead. Only the build tree's imported targets are changed: the installed package finds its
# own (paddockConfig.cmake), and libpaddock, the tests and the benches stay dynamic.
#
# glibc's getpwuid_r and getaddrinfo in a static binary use the NSS modules of the glibc it was
# built with (the linker warns): files and dns are built in; others (systemd, ldap) are loaded
# at run time and must match that glibc. The libraries linked in (libidn2, libseccomp,
# liburing) get a distribution's fixes only when the CLI is rebuilt.
option(PADDOCK_STATIC_CLI "Link the paddock command -static-pie" ON)

set(paddock_static_missing "")
foreach(lib c stdc++)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=lib${lib}.a
    OUTPUT_VARIABLE archive OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${archive}")
    list(APPEND paddock_static_missing lib${lib}.a)
  endif()
endforeach()

# paddock_static_twin(<pkg-config prefix>): PkgConfig::<prefix> links the archives into a
# PADDOCK_STATIC_EXE target, the shared library elsewhere.
function(paddock_static_twin prefix)
  set(is_static "$<BOOL:$<TARGET_PROPERTY:PADDOCK_STATIC_EXE>>")
  set(links "")
  foreach(lib IN LISTS ${prefix}_STATIC_LIBRARIES)
    find_library(paddock_archive_${lib} NAMES lib${lib}.a
      HINTS ${${prefix}_STATIC_LIBRARY_DIRS} ${${prefix}_LIBRARY_DIRS})
    if(NOT paddock_archive_${lib})
      list(APPEND paddock_static_missing lib${lib}.a)
      set(paddock_static_missing ${paddock_static_missing} PARENT_SCOPE)
      continue()
    endif()
    list(APPEND links "$<${is_static}:${paddock_archive_${lib}}>")
  endforeach()
  get_target_property(shared PkgConfig::${prefix} INTERFACE_LINK_LIBRARIES)
  foreach(item IN LISTS shared)
    list(APPEND links "$<$<NOT:${is_static}>:${item}>")
  endforeach()
  set_property(TARGET PkgConfig::${prefix} PROPERTY INTERFACE_LINK_LIBRARIES "${links}")
endfunction()

if(PADDOCK_STATIC_CLI)
  foreach(prefix LIBURING LIBSECCOMP LIBIDN2 TREE_SITTER NETTLE)
    paddock_static_twin(${prefix})
  endforeach()
  if(paddock_static_missing)
    # Not an error: the CLI works linked dynamically, only slower to start.
    message(WARNING "paddock: no static ${paddock_static_missing}; the CLI is linked dynamically "
      "(slower start-up). Debian: .ci/setup installs them.")
    set(PADDOCK_STATIC_CLI OFF CACHE BOOL "" FORCE)
  endif()
endif()
