// Word lists for memorable run ids. 64 words each, so one byte picks a word without bias.
// Never edit them: a changed list maps every existing seed to a different id.

// deno-fmt-ignore
/** Adjectives, short and neutral. */
export const ADJECTIVES: readonly string[] = [
  "amber", "brave", "bright", "brisk", "calm", "clever", "cosmic", "crisp",
  "daring", "deft", "eager", "early", "fair", "fancy", "fleet", "fresh",
  "gentle", "glad", "golden", "grand", "happy", "hardy", "honest", "humble",
  "jolly", "keen", "kind", "lively", "lucid", "lucky", "merry", "mighty",
  "misty", "modest", "nimble", "noble", "patient", "plucky", "polite", "proud",
  "quick", "quiet", "rapid", "ready", "robust", "rosy", "sharp", "shiny",
  "silent", "silver", "snug", "solid", "steady", "sunny", "swift", "tidy",
  "trusty", "vivid", "warm", "wise", "witty", "young", "zesty", "zippy",
];

// deno-fmt-ignore
/** Nouns: animals and things, easy to say aloud. */
export const NOUNS: readonly string[] = [
  "anchor", "badger", "beacon", "bison", "canyon", "cedar", "comet", "condor",
  "coral", "crane", "delta", "dolphin", "ember", "falcon", "fern", "finch",
  "fjord", "fox", "glacier", "harbor", "hawk", "heron", "island", "jaguar",
  "kestrel", "lark", "lantern", "lemur", "lynx", "maple", "meadow", "meteor",
  "moose", "nebula", "oak", "orbit", "orca", "otter", "owl", "panda",
  "pebble", "pelican", "pine", "prairie", "quail", "raven", "reef", "river",
  "robin", "sequoia", "sparrow", "spruce", "summit", "swan", "thistle", "tiger",
  "tundra", "valley", "walrus", "willow", "wolf", "wren", "yak", "zephyr",
];
