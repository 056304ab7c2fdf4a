
p1scratch
R€€@€  