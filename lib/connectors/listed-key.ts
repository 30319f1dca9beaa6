/** One listed record as the keyset sees it: its key when it normalizes, else its ref (if any). */
export type ListedKey =
  | { readonly ok: true; readonly id: string; readonly at: string }
  | { readonly ok: false; readonly ref: string | null };
