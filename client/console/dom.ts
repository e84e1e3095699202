/** Adds a child element holding `text` as a text node (never parsed as HTML). */
export function add(parent: HTMLElement, tag: string, className: string, text = ''): HTMLElement {
  const child = document.createElement(tag)
  child.className = className
  child.textContent = text
  parent.append(child)
  return child
}

export function button(parent: HTMLElement, className: string, text: string, onClick: () => void): HTMLButtonElement {
  const made = add(parent, 'button', className, text) as HTMLButtonElement
  made.type = 'button'
  made.addEventListener('click', onClick)
  return made
}
