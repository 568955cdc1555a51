module example.com/late

go 1.26
