/** What the page's buttons do to a run; given to the server only with `fusee ui --allow-actions`. */
export interface UiActions {
  signal(id: string, name: string, value: unknown): Promise<void>;
  cancel(id: string, reason: string): Promise<void>;
  terminate(id: string, reason: string): Promise<void>;
  reset(id: string, step: string): Promise<void>;
}
