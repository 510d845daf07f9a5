# npmci.cmake: bm_npm_ci(), the one rule that installs a directory's pinned node packages
# (package.json + package-lock.json, `npm ci`) into the build tree, never into the source tree.
# Used by cmake/webpage.cmake (the browser test page's bundler) and tests/browser (playwright).
# The caller has found BM_NPM (find_program) before calling it.
include_guard(GLOBAL)

# bm_npm_ci(SRC DEST WHAT STAMP_VAR): `npm ci` of SRC's package.json and package-lock.json in
# DEST, rerun when either changes; sets STAMP_VAR to the file it writes last (DEST's
# node_modules/.package-lock.json), for the rules that need the packages to depend on.
function(bm_npm_ci src dest what stamp_var)
  set(stamp ${dest}/node_modules/.package-lock.json)
  add_custom_command(
    OUTPUT ${stamp}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dest}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${src}/package.json ${src}/package-lock.json
            ${dest}
    COMMAND ${BM_NPM} ci --no-audit --no-fund --loglevel=error --prefix ${dest}
    DEPENDS ${src}/package.json ${src}/package-lock.json
    COMMENT "npm ci for ${what}"
    VERBATIM)
  set(${stamp_var} ${stamp} PARENT_SCOPE)
endfunction()
