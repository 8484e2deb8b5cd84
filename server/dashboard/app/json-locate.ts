// Where a JSON path (`query.and[1].or[0].where`, D18's causes) sits in the text of a JSON document, so the query
// editor can select the part a validation problem names. A small recursive-descent scan that records the span of
// each value; the text is already valid JSON when the server answered about its content.

export interface Span {
  readonly start: number;
  readonly end: number;
}

/** `query.and[1].or[0]` → ['and', 1, 'or', 0] (the leading root name dropped). */
export function pathSteps(path: string): (string | number)[] {
  const steps: (string | number)[] = [];
  const re = /\.([^.[\]]+)|\[(\d+)\]/g;
  const rest = path.replace(/^[^.[]*/, '');
  for (let m = re.exec(rest); m !== null; m = re.exec(rest)) steps.push(m[1] !== undefined ? m[1] : Number(m[2]));
  return steps;
}

export function locate(text: string, steps: readonly (string | number)[]): Span | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i] as string)) i++;
  };
  const skipString = () => {
    i++;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
  };
  // Scans one value starting at i; `want` is the rest of the path inside it (null: not on the path), and the answer
  // the span of the value the path names.
  const value = (want: readonly (string | number)[] | null): Span | undefined => {
    ws();
    const start = i;
    const here = (): Span | undefined => (want !== null && want.length === 0 ? { start, end: i } : undefined);
    const inner = (step: string | number) => (want !== null && want.length > 0 && want[0] === step ? want.slice(1) : null);
    const c = text[i];
    if (c === '{') {
      i++;
      let found: Span | undefined;
      for (;;) {
        ws();
        if (text[i] === '}') break;
        const keyStart = i;
        skipString();
        const key = JSON.parse(text.slice(keyStart, i)) as string;
        ws();
        i++; // ':'
        found = value(inner(key)) ?? found;
        ws();
        if (text[i] === ',') i++;
      }
      i++;
      return found ?? here();
    }
    if (c === '[') {
      i++;
      let index = 0;
      let found: Span | undefined;
      for (;;) {
        ws();
        if (text[i] === ']') break;
        found = value(inner(index)) ?? found;
        index++;
        ws();
        if (text[i] === ',') i++;
      }
      i++;
      return found ?? here();
    }
    if (c === '"') skipString();
    else while (i < text.length && !/[\s,\]}]/.test(text[i] as string)) i++;
    return here();
  };
  try {
    return value(steps);
  } catch {
    return undefined;
  }
}
