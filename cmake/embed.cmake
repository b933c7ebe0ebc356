# rk_embed(TARGET SYMBOL FILE): compiles FILE's bytes into TARGET as
#   const char SYMBOL[];  const unsigned long SYMBOL_size;
# (NUL-terminated, hidden visibility), so a program carries a file's text
# (a DSL handler, a header, a template) without depending on where it was
# installed. Installed with the package: find_package(ringkernel) makes
# rk_embed available to consumer projects.
set(RK_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_file.cmake CACHE INTERNAL "rk_embed's generator script")
function(rk_embed target symbol file)
  get_filename_component(file ${file} ABSOLUTE)
  set(out ${CMAKE_BINARY_DIR}/embed/${symbol}.c)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DIN=${file} -DOUT=${out} -DSYMBOL=${symbol} -P ${RK_EMBED_SCRIPT}
    DEPENDS ${file} ${RK_EMBED_SCRIPT}
    COMMENT "Embedding ${file}" VERBATIM)
  target_sources(${target} PRIVATE ${out})
endfunction()
