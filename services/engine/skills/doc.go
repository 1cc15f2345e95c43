// Package skills is the skill store: versioned, immutable directories of
// instructions, templates, scripts and assets that agent profiles list by
// name and version range.
//
// A skill version is registered once (Store.Add, from a directory or a tar,
// tar.gz or zip archive) with a SKILL.md at its root whose YAML front matter
// names it and describes it to the model:
//
//	---
//	name: pdf-forms
//	description: Fill in PDF forms with the scripts in this skill.
//	version: 1.2.0
//	---
//
// Its files are copied into the store read-only, with a content digest of
// their names, modes and bytes; a version is never changed afterwards (adding
// the same content again is a no-op, other content under the same version is
// refused). On disk:
//
//	<dir>/<name>/<version>/        the files (directories 0555, files 0444 or 0555)
//	<dir>/<name>/<version>.json    the manifest; its presence makes the version visible
//
// The store is a directory so that every process of a deployment reads the
// same versions the way it reads agents.yaml: on one host directly, across
// hosts from a shared or synchronised volume. Adds are serialised by a lock
// file and appear atomically (rename), so readers never see half a version.
// Resolve checks a version's files against its digest before a run uses it.
package skills
