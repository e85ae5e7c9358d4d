package config

import "strings"

type bytesBuffer = strings.Builder
