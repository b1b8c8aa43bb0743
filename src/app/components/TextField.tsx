'use client';
/**
 * A labelled text input in a form (`.field` in globals.css): label, input, and under it either the field's problem
 * or — when the field has one — its hint. Names, sizes and namespaces are typed as they are: no autocomplete, no
 * spell check. With a `hint`, the line under the input is always there (`<id>-hint`, the input's description), red
 * while there is a problem; without one, a problem line appears only while there is a problem.
 */
import type { InputHTMLAttributes, ReactNode } from 'react';

interface TextFieldProps extends Omit<
  InputHTMLAttributes<HTMLInputElement>,
  'id' | 'value' | 'onChange' | 'aria-invalid'
> {
  id: string;
  label: ReactNode;
  value: string;
  onValue(value: string): void;
  /** What is wrong with the value; falsy when nothing is. */
  error?: string | false | null;
  /** Shown under the input while nothing is wrong. */
  hint?: ReactNode;
  /** Rendered after the input (e.g. the `<datalist>` named by `list`). */
  children?: ReactNode;
}

export function TextField({ id, label, value, onValue, error, hint, children, ...input }: TextFieldProps) {
  const hintId = hint === undefined ? undefined : `${id}-hint`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        value={value}
        autoComplete="off"
        spellCheck={false}
        {...input}
        onChange={(e) => onValue(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={hintId}
      />
      {children}
      {hintId ? (
        <span id={hintId} className={error ? 'field-error' : 'field-hint'}>
          {error || hint}
        </span>
      ) : (
        error && <span className="field-error">{error}</span>
      )}
    </div>
  );
}
