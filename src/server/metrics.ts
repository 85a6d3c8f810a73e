// Prometheus text exposition format (version 0.0.4): a pure renderer and the server's
// request counters. Checked with `promtool check metrics` in the tests.

/** Content-Type of the exposition format. */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Label names to values. */
export type Labels = Readonly<Record<string, string>>;

/** One histogram series. */
export interface HistogramSeries {
  /** Labels (without `le`). */
  labels: Labels;
  /** Cumulative count per upper bound, same order as the family's `bounds`. */
  cumulative: readonly number[];
  /** Sum of observed values. */
  sum: number;
  /** Number of observations. */
  count: number;
}

/** A metric family to render. */
export type MetricFamily =
  | {
    name: string;
    help: string;
    type: "gauge" | "counter";
    samples: readonly { labels: Labels; value: number }[];
  }
  | {
    name: string;
    help: string;
    type: "histogram";
    bounds: readonly number[];
    series: readonly HistogramSeries[];
  };

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function escapeHelp(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

function formatLabels(labels: Labels): string {
  const keys = Object.keys(labels);
  if (keys.length === 0) return "";
  return `{${keys.map((k) => `${k}="${escapeLabel(labels[k])}"`).join(",")}}`;
}

/** Renders metric families in the Prometheus text format (ends with a newline). */
export function renderExposition(families: readonly MetricFamily[]): string {
  const out: string[] = [];
  for (const f of families) {
    out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`);
    out.push(`# TYPE ${f.name} ${f.type}`);
    if (f.type === "histogram") {
      for (const s of f.series) {
        f.bounds.forEach((bound, i) => {
          out.push(
            `${f.name}_bucket${formatLabels({ ...s.labels, le: formatValue(bound) })} ${
              s.cumulative[i]
            }`,
          );
        });
        out.push(`${f.name}_bucket${formatLabels({ ...s.labels, le: "+Inf" })} ${s.count}`);
        out.push(`${f.name}_sum${formatLabels(s.labels)} ${formatValue(s.sum)}`);
        out.push(`${f.name}_count${formatLabels(s.labels)} ${s.count}`);
      }
    } else {
      for (const s of f.samples) {
        out.push(`${f.name}${formatLabels(s.labels)} ${formatValue(s.value)}`);
      }
    }
  }
  return out.join("\n") + "\n";
}

/** Upper bounds (seconds) of the request-duration histogram. */
export const DURATION_BOUNDS: readonly number[] = [
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
];

interface Series {
  labels: Labels;
  buckets: number[];
  sum: number;
  count: number;
}

/** Counts requests by route template, method and status, and their durations by route. */
export class RequestMetrics {
  readonly #requests = new Map<string, { labels: Labels; value: number }>();
  readonly #durations = new Map<string, Series>();

  /** Records one answered request. */
  record(route: string, method: string, status: number, seconds: number): void {
    const key = `${route} ${method} ${status}`;
    const counter = this.#requests.get(key) ??
      { labels: { route, method, code: String(status) }, value: 0 };
    counter.value++;
    this.#requests.set(key, counter);
    const dKey = `${route} ${method}`;
    const series = this.#durations.get(dKey) ??
      { labels: { route, method }, buckets: DURATION_BOUNDS.map(() => 0), sum: 0, count: 0 };
    DURATION_BOUNDS.forEach((bound, i) => {
      if (seconds <= bound) series.buckets[i]++;
    });
    series.sum += seconds;
    series.count++;
    this.#durations.set(dKey, series);
  }

  /** The request families, in a stable order. */
  families(): MetricFamily[] {
    const byKey = <T>(m: Map<string, T>) => [...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    return [
      {
        name: "bernstein_http_requests_total",
        help: "HTTP requests answered by the task server, by route, method and status code.",
        type: "counter",
        samples: byKey(this.#requests).map(([, v]) => v),
      },
      {
        name: "bernstein_http_request_duration_seconds",
        help: "Time to answer a task server request, by route and method.",
        type: "histogram",
        bounds: DURATION_BOUNDS,
        series: byKey(this.#durations).map(([, s]) => ({
          labels: s.labels,
          cumulative: s.buckets,
          sum: s.sum,
          count: s.count,
        })),
      },
    ];
  }
}
