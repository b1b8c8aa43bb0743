/**
 * PVE property strings: `default-value,key=value,key=value`. The first item may be a bare value that stands
 * for the schema's default key (`file` for disks, the model for nets); later bare items are flags.
 */
export interface PropertyString {
  /** The leading bare value, if the string starts with one (`local-lvm:32`, `virtio`, `cdrom`). */
  head?: string;
  props: Map<string, string>;
}

export function parsePropertyString(text: string): PropertyString {
  const parts = text.split(',').map((p) => p.trim());
  const result: PropertyString = { props: new Map() };
  parts.forEach((part, i) => {
    if (part === '') return;
    const eq = part.indexOf('=');
    if (eq < 0) {
      if (i === 0) result.head = part;
      else result.props.set(part, '1');
      return;
    }
    result.props.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  });
  return result;
}
