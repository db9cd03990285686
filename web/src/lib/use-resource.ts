// Loads something from the API into reactive state with loading and error flags, and reloads on demand.
import { ref, type Ref } from "vue";
import { ApiError } from "../api/client";

export interface Resource<T> {
  data: Ref<T | undefined>;
  error: Ref<ApiError | undefined>;
  loading: Ref<boolean>;
  reload(): Promise<void>;
}

export function toApiError(error: unknown): ApiError {
  return error instanceof ApiError
    ? error
    : new ApiError(0, "client_error", error instanceof Error ? error.message : String(error));
}

export function useResource<T>(load: () => Promise<T>): Resource<T> {
  const data = ref<T>() as Ref<T | undefined>;
  const error = ref<ApiError>();
  const loading = ref(false);
  async function reload(): Promise<void> {
    loading.value = true;
    try {
      data.value = await load();
      error.value = undefined;
    } catch (e) {
      error.value = toApiError(e);
    } finally {
      loading.value = false;
    }
  }
  void reload();
  return { data, error, loading, reload };
}

/** Runs one user action, exposing busy and error state for the button and the message beside it. */
export function useAction() {
  const busy = ref(false);
  const error = ref<ApiError>();
  async function run<T>(action: () => Promise<T>): Promise<T | undefined> {
    busy.value = true;
    error.value = undefined;
    try {
      return await action();
    } catch (e) {
      error.value = toApiError(e);
      return undefined;
    } finally {
      busy.value = false;
    }
  }
  return { busy, error, run };
}
