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

/** A fenced block of shell commands (` ```sh ` or ` ```bash `), and why it is not run, if it says so. */
export interface ShellBlock {
  /** The line of the opening fence (1-based). */
  line: number;
  code: string;
  /** The reason of a `<!-- not run: <reason> -->` comment on the line right before the fence. */
  notRun?: string;
}

const FENCE = /^(\s*)(```|~~~)\s*([\w-]*)/;
const NOT_RUN = /^\s*<!--\s*not run:\s*(.+?)\s*-->\s*$/;

/** Every fenced block of a page with its info string (`sh`, `json`, `` for none) and its code. */
export function fencedBlocks(text: string): { line: number; info: string; code: string; before: string }[] {
  const lines = text.split('\n');
  const blocks: { line: number; info: string; code: string; before: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence] = open as unknown as [string, string, string, string];
    let end = i + 1;
    while (end < lines.length && !new RegExp(`^\\s*${fence}\\s*$`).test(lines[end]!)) end++;
    blocks.push({
      line: i + 1,
      info: open[3]!,
      // The block's lines without the list item's indent they share with the fence.
      code: lines
        .slice(i + 1, end)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
        .join('\n'),
      before: i > 0 ? lines[i - 1]! : '',
    });
    i = end;
  }
  return blocks;
}

/** The page's shell blocks, in order, each with its not-run marker when it has one. */
export function shellBlocks(text: string): ShellBlock[] {
  return fencedBlocks(text)
    .filter((b) => b.info === 'sh' || b.info === 'bash')
    .map((b) => {
      const notRun = NOT_RUN.exec(b.before)?.[1];
      return { line: b.line, code: b.code, ...(notRun ? { notRun } : {}) };
    });
}
