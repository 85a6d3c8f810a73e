/** Read access to environment variables, injected so tests control the environment. */
export interface EnvReader {
  /** The variable's value, or undefined when unset or not readable under the permission set. */
  get(name: string): string | undefined;
}

/** The process environment. A variable outside the env permission reads as unset. */
export const processEnv: EnvReader = {
  get(name) {
    try {
      return Deno.env.get(name);
    } catch (error) {
      if (error instanceof Deno.errors.NotCapable) return undefined;
      throw error;
    }
  },
};

/** An environment made of a fixed map (tests, child environments). */
export function mapEnv(values: Readonly<Record<string, string>>): EnvReader {
  return { get: (name) => (Object.hasOwn(values, name) ? values[name] : undefined) };
}
