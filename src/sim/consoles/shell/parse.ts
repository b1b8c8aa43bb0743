/**
 * Just enough shell grammar for interactive use and `sh -c`: words with single/double quotes and backslash
 * escapes, `$VAR`/`${VAR}`/`$?` expansion, command lists joined by `;`, `&&`, `||`, and stdout redirected to a
 * file with `>` / `>>`. Pipes, other redirections and subshells are refused with a clear message rather than
 * misread as arguments.
 */

export interface Word {
  /** Segments of the word; `expand` is false inside single quotes. */
  parts: { text: string; expand: boolean }[];
}

export interface CommandListItem {
  /** Run unconditionally, only after success (`&&`) or only after failure (`||`). */
  when: 'always' | 'and' | 'or';
  words: Word[];
  /** `> file` (append: `>> file`): stdout goes to the file. */
  redirect?: { append: boolean; target: Word };
}

export function splitCommandList(line: string): CommandListItem[] {
  const items: CommandListItem[] = [];
  let words: Word[] = [];
  let current: Word | undefined;
  let when: CommandListItem['when'] = 'always';
  let redirect: { append: boolean; target?: Word } | undefined;
  const push = (text: string, expand: boolean) => {
    current ??= { parts: [] };
    const last = current.parts[current.parts.length - 1];
    // Adjacent characters of the same quoting form one segment so `$NAME` is expanded as a whole.
    if (last && last.expand === expand) last.text += text;
    else current.parts.push({ text, expand });
  };
  const endWord = () => {
    if (current && redirect && !redirect.target) redirect.target = current;
    else if (current) words.push(current);
    current = undefined;
  };
  const endCommand = (next: CommandListItem['when']) => {
    endWord();
    if (redirect && !redirect.target) throw new Error("syntax error near unexpected token `newline'");
    const target = redirect?.target;
    if (words.length)
      items.push({ when, words, ...(target ? { redirect: { append: redirect!.append, target } } : {}) });
    else if (next !== 'always')
      throw new Error(`syntax error near unexpected token \`${next === 'and' ? '&&' : '||'}'`);
    words = [];
    redirect = undefined;
    when = next;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === ' ' || c === '\t') endWord();
    else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error("unexpected EOF while looking for matching `''");
      push(line.slice(i + 1, end), false);
      i = end;
    } else if (c === '"') {
      let text = '';
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && j + 1 < line.length && '"\\$`'.includes(line[j + 1]!)) j++;
        text += line[j];
      }
      if (j >= line.length) throw new Error('unexpected EOF while looking for matching `"\'');
      push(text, true);
      i = j;
    } else if (c === '\\') {
      if (i + 1 < line.length) push(line[++i]!, false);
    } else if (c === ';') endCommand('always');
    else if (c === '&' && line[i + 1] === '&') {
      endCommand('and');
      i++;
    } else if (c === '|' && line[i + 1] === '|') {
      endCommand('or');
      i++;
    } else if (c === '#' && !current) break;
    else if (c === '>' && !redirect) {
      endWord();
      const append = line[i + 1] === '>';
      if (append) i++;
      redirect = { append };
    } else if ('|&<>()`'.includes(c)) {
      throw new Error(
        `'${c}': pipes, redirections, background jobs and subshells are not available in this simulated shell`,
      );
    } else push(c, true);
  }
  endCommand('always');
  return items;
}

/** Words to argv, expanding `$NAME`, `${NAME}` and `$?` from `env` (unknown variables expand to nothing). */
export function expandWords(words: Word[], env: Record<string, string>): string[] {
  return words.map((w) =>
    w.parts
      .map((p) =>
        p.expand
          ? p.text.replace(/\$(?:\{(\w+|\?)\}|(\w+|\?))/g, (_m, a?: string, b?: string) => env[(a ?? b)!] ?? '')
          : p.text,
      )
      .join(''),
  );
}
