package config

// Layer names the source a resolved value came from.
type Layer string

// The layers, highest precedence first.
const (
	// LayerFlag is a command-line flag the user set.
	LayerFlag Layer = "flag"
	// LayerEnv is the process environment.
	LayerEnv Layer = "env"
	// LayerDotenv is ./.env in the working directory.
	LayerDotenv Layer = "dotenv"
	// LayerHomeDotenv is ~/.xbot/.env.
	LayerHomeDotenv Layer = "home_dotenv"
	// LayerConfigTOML is ~/.xbot/config.toml.
	LayerConfigTOML Layer = "config_toml"
	// LayerDefault is the key's built-in default (possibly empty).
	LayerDefault Layer = "default"
)

// String returns the layer's name as shown by Explain.
func (l Layer) String() string { return string(l) }

// entry is one value found in one layer.
type entry struct {
	value  string
	origin string
}

// layerValues holds the values one layer sets, by key name.
type layerValues struct {
	layer  Layer
	values map[string]entry
}
