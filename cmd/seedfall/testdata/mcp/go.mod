module example.com/lossy

go 1.26
