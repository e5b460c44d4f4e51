package fakedriver

import (
	"errors"
	"fmt"
)

// ErrBadPull is returned by Pull for a negative offset or a non-positive max.
var ErrBadPull = errors.New("fakedriver: bad pull arguments")

func errBadPull(offset int64, max int) error {
	return fmt.Errorf("%w: offset %d, max %d", ErrBadPull, offset, max)
}
