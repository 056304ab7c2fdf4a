
p1scratch
j
true