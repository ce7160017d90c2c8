/**
 * Just enough of Markdown to check the docs: the links a page makes and the anchors its headings
 * get on GitHub. Code (fenced blocks and inline spans) is skipped: a link shown as code is not one.
 */

export interface MarkdownLink {
  line: number;
  target: string;
}

/** The lines of a page outside fenced code blocks. */
function proseLines(text: string): { line: number; content: string }[] {
  const lines: { line: number; content: string }[] = [];
  let fenced = false;
  text.split('\n').forEach((content, i) => {
    if (/^\s*(```|~~~)/.test(content)) fenced = !fenced;
    else if (!fenced) lines.push({ line: i + 1, content });
  });
  return lines;
}

/** Inline links and images, `[text](target)` and `![alt](target "title")`, outside code spans. */
export function links(text: string): MarkdownLink[] {
  return proseLines(text).flatMap(({ line, content }) =>
    [
      ...content.replace(/`[^`]*`/g, '``').matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g),
    ].map((m) => ({
      line,
      target: m[1]!,
    })),
  );
}

/**
 * The anchors GitHub gives a page's headings (github-slugger): the heading's text lower-cased,
 * every character that is not a letter, mark, number, connector, space or hyphen dropped, each space
 * a hyphen; a repeated slug gets `-1`, `-2`, … in order.
 */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { content } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(content);
    if (!heading) continue;
    const visible = heading[1]!.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = visible
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return anchors;
}

/** The names in the first column of every table row whose first cell is one code span of an env name. */
export function tableVariables(text: string): string[] {
  return text
    .split('\n')
    .map((row) => /^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|/.exec(row)?.[1])
    .filter((name): name is string => name !== undefined);
}
