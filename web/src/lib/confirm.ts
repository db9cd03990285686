// One confirmation dialog for the whole app: confirmAction() resolves true when the operator agrees.
import { reactive } from "vue";

export interface ConfirmRequest {
  title: string;
  /** Paragraphs shown in order. */
  body: string[];
  /** Items listed under the body, e.g. the sessions a change will rotate. */
  items?: string[];
  confirmLabel: string;
  danger?: boolean;
}

export const confirmState = reactive<{
  request: ConfirmRequest | undefined;
  resolve: ((ok: boolean) => void) | undefined;
}>({
  request: undefined,
  resolve: undefined,
});

export function confirmAction(request: ConfirmRequest): Promise<boolean> {
  confirmState.resolve?.(false);
  return new Promise((resolve) => {
    confirmState.request = request;
    confirmState.resolve = resolve;
  });
}

export function settleConfirm(ok: boolean): void {
  const resolve = confirmState.resolve;
  confirmState.request = undefined;
  confirmState.resolve = undefined;
  resolve?.(ok);
}
