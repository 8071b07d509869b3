import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import { useSettingsStore } from './settings.js';

function clamp(v: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, Math.round(v)));
}

/** Which panels are open and how big; sizes persist in settings (ui.*). */
export const useLayoutStore = defineStore('layout', () => {
  const settings = useSettingsStore();
  const rightOpen = ref(false);
  const bottomOpen = ref(false);

  const leftWidth = computed(() => settings.values['ui.leftPanelWidth']);
  const rightWidth = computed(() => settings.values['ui.rightPanelWidth']);
  const bottomHeight = computed(() => settings.values['ui.bottomPanelHeight']);

  function toggleRight(): void {
    rightOpen.value = !rightOpen.value;
  }
  function toggleBottom(): void {
    bottomOpen.value = !bottomOpen.value;
  }

  // Dragging updates the view at once; the host stores the final size when the drag ends.
  function resizeLeft(px: number, commit: boolean): void {
    const v = clamp(px, 160, 800);
    if (commit) void settings.set({ 'ui.leftPanelWidth': v });
    else settings.values['ui.leftPanelWidth'] = v;
  }
  function resizeRight(px: number, commit: boolean): void {
    const v = clamp(px, 240, 1200);
    if (commit) void settings.set({ 'ui.rightPanelWidth': v });
    else settings.values['ui.rightPanelWidth'] = v;
  }
  function resizeBottom(px: number, commit: boolean): void {
    const v = clamp(px, 120, 1200);
    if (commit) void settings.set({ 'ui.bottomPanelHeight': v });
    else settings.values['ui.bottomPanelHeight'] = v;
  }

  return { rightOpen, bottomOpen, leftWidth, rightWidth, bottomHeight, toggleRight, toggleBottom, resizeLeft, resizeRight, resizeBottom };
});
