
p1scratch
Z	0HP€`