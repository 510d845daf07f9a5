# CPack pre-build script of the Debian package (CMakeLists.txt: CPACK_PRE_BUILD_SCRIPTS): the
# install rules are prefix-relative, so with the package's /usr prefix the configuration and
# the units land in usr/etc and usr/lib/systemd. Moved here to the places the daemon and a
# Debian 12 system use: /etc/bloatmeter and /lib/systemd/system.
set(root "${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
if(NOT IS_DIRECTORY "${root}/usr")
  message(FATAL_ERROR "deb-layout: no usr/ under the staging directory ${root}")
endif()
foreach(move "usr/etc;etc" "usr/lib/systemd/system;lib/systemd/system")
  list(GET move 0 from)
  list(GET move 1 to)
  if(NOT IS_DIRECTORY "${root}/${from}")
    message(FATAL_ERROR "deb-layout: ${from} is missing from the staging directory")
  endif()
  get_filename_component(parent "${root}/${to}" DIRECTORY)
  file(MAKE_DIRECTORY "${parent}")
  file(RENAME "${root}/${from}" "${root}/${to}")
endforeach()
# usr/lib/systemd is empty now.
file(REMOVE_RECURSE "${root}/usr/lib/systemd")
