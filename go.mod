module github.com/tdsextract/tdsextract

go 1.26.0

require github.com/go-viper/mapstructure/v2 v2.5.0
