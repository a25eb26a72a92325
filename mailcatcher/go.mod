module exactlyonce/mailcatcher

go 1.27.3
