# rk_embed(TARGET SYMBOL FILE): compiles FILE's bytes into TARGET as
#   const char SYMBOL[];  const unsigned long SYMBOL_size;
# so backends can write headers and templates out at run time without
# depending on where the library was installed.
function(rk_embed target symbol file)
  set(out ${CMAKE_BINARY_DIR}/embed/${symbol}.c)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DIN=${file} -DOUT=${out} -DSYMBOL=${symbol} -P ${CMAKE_SOURCE_DIR}/cmake/embed_file.cmake
    DEPENDS ${file} ${CMAKE_SOURCE_DIR}/cmake/embed_file.cmake
    COMMENT "Embedding ${file}" VERBATIM)
  target_sources(${target} PRIVATE ${out})
endfunction()
