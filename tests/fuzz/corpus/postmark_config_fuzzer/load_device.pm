load /dev/zero
