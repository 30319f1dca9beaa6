/** Lambda entry point; the lead engineer replaces this placeholder with the real thin handler. */
export const handler = async (): Promise<never> => {
  throw new Error('reaper: not implemented yet');
};
