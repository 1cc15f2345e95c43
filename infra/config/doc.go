// Package config resolves xbot's settings from layered sources.
//
// Every setting is a [Key] with one snake_case name that is spelled the same
// way everywhere: the config file key kafka_brokers, the environment variable
// XBOT_KAFKA_BROKERS and the command-line flag --kafka-brokers. There is no
// second name for a key.
//
// [Load] resolves each key from these layers, highest first:
//
//  1. flag                 --kafka-brokers (only flags the user actually set)
//  2. process environment  XBOT_KAFKA_BROKERS
//  3. ./.env               project dotenv file in the working directory
//  4. ~/.xbot/.env         user dotenv file
//  5. ~/.xbot/config.toml  user config file, snake_case keys at top level
//  6. default              the Key's Default
//
// The first layer that holds a non-blank value wins; a blank or
// whitespace-only value counts as unset and falls through to the next layer.
//
// Guarantees: a misspelled XBOT_* name in a dotenv file and an unknown key in
// config.toml are errors that name the file and line, never silently ignored.
// Values of secret keys are never printed: [Resolved.Explain] redacts them,
// and errors from this package never quote a dotenv line, the value of a
// secret key or an API token.
package config
