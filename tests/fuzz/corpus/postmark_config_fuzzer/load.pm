set location /tmp
load missing.pm
run
