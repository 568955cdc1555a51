module example.com/pausebench

go 1.21
