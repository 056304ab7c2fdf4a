
p1scratch
b2dÐ d(