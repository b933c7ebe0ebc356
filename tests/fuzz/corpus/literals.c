int x = 0x1p3 + 1e999 + 0777 + 0b101 + 18446744073709551615 + 99999999999999999999 + 1.5e+3L + .5f + 08;
"unterminated
'ab' + '\q';
/* unterminated