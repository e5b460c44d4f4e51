package store

import (
	"fmt"
	"path/filepath"
	"strings"
)

// ConfigPath is config/<name> under a store root, where the broker keeps its
// own metadata files (subscriptionGroup.json) next to topics.json.
func ConfigPath(root, name string) string { return filepath.Join(root, "config", name) }

// ReadConfigFile returns the content of config/<name> (falling back to
// config/<name>.bak when the file is missing, empty or fails decode, as
// RocketMQ's ConfigManager.load does), and false when neither exists.
// decode validates the bytes; the first version it accepts is returned.
func (s *Store) ReadConfigFile(name string, decode func([]byte) error) (bool, error) {
	if err := checkConfigName(name); err != nil {
		return false, err
	}
	return readFileWithBackup(s.cfg.FS, ConfigPath(s.cfg.Root, name), decode)
}

// WriteConfigFile replaces config/<name> atomically (write a temporary
// file, sync, keep the old one as .bak, rename, sync the directory), so a
// crash leaves the old or the new content. Concurrent writers of the same
// name must serialize themselves.
func (s *Store) WriteConfigFile(name string, data []byte) error {
	if err := checkConfigName(name); err != nil {
		return err
	}
	path := ConfigPath(s.cfg.Root, name)
	if err := s.cfg.FS.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return writeFileAtomic(s.cfg.FS, path, data)
}

func checkConfigName(name string) error {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return fmt.Errorf("%w: config file name %q", ErrInvalidConfig, name)
	}
	return nil
}
