set size 500 10000
set number 2000
set seed 42
set transactions 500
set subdirectories 10
set read 4096
set write 4096
set buffering false
set bias read 5
set bias create 5
set report terse
run
set number 4000
run
show
quit
