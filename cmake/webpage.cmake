# webpage.cmake: builds the browser test page (web/page) into BM_WEBPAGE_DIR for the daemon to
# embed. Sets BM_WEBPAGE_DIR and BM_WEBPAGE_OUTPUTS (index.html, app.js, app.css there), or an
# empty BM_WEBPAGE_OUTPUTS with a warning when node/npm are missing or BM_WEBPAGE_BUILD is OFF.
# `npm ci` runs in the build tree, never in the source tree, from the pinned package-lock.json.
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/npmci.cmake)
option(BM_WEBPAGE_BUILD "Build the browser test page (needs node and npm)" ON)

set(BM_WEBPAGE_DIR ${CMAKE_BINARY_DIR}/webpage)
set(BM_WEBPAGE_OUTPUTS "")
set(_bm_page_src ${CMAKE_CURRENT_LIST_DIR}/../web/page)
get_filename_component(_bm_page_src ${_bm_page_src} ABSOLUTE)

if(NOT BM_WEBPAGE_BUILD)
  message(WARNING "BM_WEBPAGE_BUILD is OFF: bloatmeterd is built without the browser test page")
  return()
endif()
find_program(BM_NODE NAMES node nodejs)
find_program(BM_NPM NAMES npm)
if(NOT BM_NODE OR NOT BM_NPM)
  message(WARNING "node/npm missing (Debian packages nodejs and npm): bloatmeterd is built "
                  "without the browser test page")
  return()
endif()

set(_bm_page_npm ${CMAKE_BINARY_DIR}/webpage-npm)
file(GLOB _bm_page_sources CONFIGURE_DEPENDS ${_bm_page_src}/src/*)
bm_npm_ci(${_bm_page_src} ${_bm_page_npm} "the browser test page (web/page)" _bm_page_npm_stamp)
set(BM_WEBPAGE_OUTPUTS ${BM_WEBPAGE_DIR}/index.html ${BM_WEBPAGE_DIR}/app.js
                       ${BM_WEBPAGE_DIR}/app.css)
# build.mjs is copied next to node_modules so its imports (esbuild) resolve there.
add_custom_command(
  OUTPUT ${BM_WEBPAGE_OUTPUTS}
  COMMAND ${CMAKE_COMMAND} -E copy_if_different ${_bm_page_src}/build.mjs ${_bm_page_npm}
  COMMAND ${BM_NODE} ${_bm_page_npm}/build.mjs ${_bm_page_src}/src ${BM_WEBPAGE_DIR}
  DEPENDS ${_bm_page_npm_stamp} ${_bm_page_src}/build.mjs
          ${_bm_page_sources}
  COMMENT "bundling the browser test page into ${BM_WEBPAGE_DIR}"
  VERBATIM)
add_custom_target(bm_webpage ALL DEPENDS ${BM_WEBPAGE_OUTPUTS})
