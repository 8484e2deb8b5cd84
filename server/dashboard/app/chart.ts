// A uPlot time chart as a preact component: x is time (seconds), one line per series; redrawn when data changes,
// resized with its container.

import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { html } from './html.js';

export interface ChartSeries {
  readonly label: string;
  readonly color: string;
  readonly values: readonly number[];
}

export function Chart({ title, times, series }: { title: string; times: readonly number[]; series: readonly ChartSeries[] }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  useEffect(() => {
    const el = box.current;
    if (el === null) return;
    const width = Math.max(280, el.clientWidth);
    const opts: uPlot.Options = {
      title,
      width,
      height: 220,
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.color, width: 1.5 }))],
      axes: [{}, { size: 60 }],
      scales: { x: { time: true } },
    };
    const data = [times as number[], ...series.map((s) => s.values as number[])] as uPlot.AlignedData;
    plot.current?.destroy();
    plot.current = new uPlot(opts, data, el);
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(280, el.clientWidth), height: 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
      plot.current = undefined;
    };
  }, [times, series, title]);
  return html`<figure class="chart" ref=${box} aria-label=${title}></figure>`;
}
